# signature: float32[1] float32[1]
@jiasu.kernel
def divergent_activemask(branch_masks, entry_masks):
    i = jiasu.grid(1)
    entry_masks[i] = jiasu.activemask()
    lane = jiasu.laneid
    if lane % 2 == 0:
        branch_masks[i] = jiasu.activemask()
    else:
        branch_masks[i] = jiasu.activemask()
