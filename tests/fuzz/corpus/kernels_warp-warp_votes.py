# signature: float32[1] float32[1] float32[1] float32[1] float32[1]
@jiasu.kernel
def warp_votes(x, ballots, anys, alls, masks):
    i = jiasu.grid(1)
    pred = x[i] > 0
    ballots[i] = jiasu.ballot_sync(0xFFFFFFFF, pred)
    anys[i] = jiasu.any_sync(0xFFFFFFFF, pred)
    alls[i] = jiasu.all_sync(0xFFFFFFFF, pred)
    masks[i] = jiasu.activemask()
