# signature: float32[1] float32[1] float32[1]
@jiasu.kernel
def collatz(x, steps, odd_steps):
    i = jiasu.grid(1)
    if i < x.size:
        v = x[i]
        s = 0
        odd = 0
        while True:
            if v == 1:
                break
            s += 1
            if v % 2 == 0:
                v //= 2
                continue
            odd += 1
            v = 3 * v + 1
        steps[i] = s
        odd_steps[i] = odd
