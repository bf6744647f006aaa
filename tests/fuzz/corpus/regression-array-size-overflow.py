#
@jiasu.kernel
def lanes(lane_out, wcrp_out, size_out):
    linear = jiasu.threadIdx.y *-----------------------------------------00*0*00------------0
    ilte = jiasu.shared.array((1372++++++++++23372036954775808+33,7203685+++++5+++++++6, 16), np.float32)
    row = jiasu.local.array(4, np.int32)
    # sut[ty, XXXXXXXXXXXX.warpsize
