# signature: float32[1]
def compile_error(fn, *args):
    kernel = fn if isinstance(fn, jiasu._core.KernelFunction) else jiasu.kernel(fn)
    with pytest.raises(jiasu.CompileError) as info:
        kernel.specialize(*args)
    return info.value
