# signature: float32[1] float32[1]
@jiasu.kernel
def take_tickets(counter, tickets):
    i = jiasu.grid(1)
    if i < tickets.size:
        tickets[i] = jiasu.atomic.add(counter, 0, 1)
