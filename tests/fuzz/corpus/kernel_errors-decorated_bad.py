# signature: float32[1]
@jiasu.kernel
@_keep
def decorated_bad(a):
    a[0] = undefined_name  # noqa: F821
