"""jiasu.profile(): the core's launch recorder, plus the roofline plot (matplotlib, an optional extra) and
`python -m jiasu profile SCRIPT.py`."""
import os
import runpy
import sys

from . import _core


class Profile(_core.Profile):
    """``with jiasu.profile() as p:`` records every kernel launch, matmul and convolution inside with its
    configuration and time; ``print(p)`` shows the table, ``print(p.report())`` the advisor's report, and
    ``p.roofline("roofline.png")`` draws the kernels on the device's roofline."""

    def roofline(self, path, flops=None, title=None):
        """Draw the kernels whose traffic is known on a roofline: arithmetic intensity (FLOP per byte moved) against
        GFLOP/s, under the measured memory roof and the FP32 roof; kernels whose FLOPs are not known are drawn on
        the memory roof's axis at their achieved bandwidth. `flops` maps kernel names to FLOPs per call."""
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError as error:
            raise ImportError("p.roofline() draws with matplotlib, which is not installed: "
                              "pip install matplotlib") from error
        report = self.report(flops or {})
        peaks = report.peaks
        bandwidth, compute = peaks["bandwidth_gbs"], peaks["fp32_gflops"]
        kernels = [k for k in report.kernels if k["bytes"]]
        intensities = [k["flops"] / k["bytes"] for k in kernels if k["flops"] is not None]
        low = min([0.01, *intensities]) / 2
        high = max([100.0, *intensities]) * 2
        figure, axes = plt.subplots(figsize=(8, 5.5))
        xs = [low * (high / low) ** (i / 200) for i in range(201)]
        roof = [bandwidth * x if not compute else min(bandwidth * x, compute) for x in xs]
        axes.plot(xs, roof, color="black", linewidth=1.5,
                  label=f"memory {bandwidth:.0f} GB/s" + (f", FP32 {compute / 1e3:.1f} TFLOP/s" if compute else ""))
        unplaced = []
        for k in kernels:
            if not k["flops"]:
                unplaced.append(f"{k['name']}: {k['gbs']:.3g} GB/s "
                                f"({100 * k['bandwidth_fraction']:.0f}% of the memory roof)")
                continue
            x, y = k["flops"] / k["bytes"], k["gflops"]
            axes.scatter([x], [y], s=40, zorder=3)
            axes.annotate(f"{k['name']} ({k['mean_ms'] * 1e3:.1f} us)", (x, y), textcoords="offset points",
                          xytext=(5, 4), fontsize=8)
        if unplaced:
            axes.text(0.02, 0.98, "FLOPs unknown (pass flops=):\n" + "\n".join(unplaced), transform=axes.transAxes,
                      va="top", fontsize=8)
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel("arithmetic intensity (FLOP / byte)")
        axes.set_ylabel("GFLOP/s")
        device = "CPU" if peaks["device"] == "cpu" else _core.Device(peaks["device"]).name
        axes.set_title(f"{title} ({device})" if title else f"roofline: {device}")
        axes.grid(True, which="both", alpha=0.3)
        axes.legend(loc="lower right", fontsize=8)
        figure.tight_layout()
        figure.savefig(path, dpi=120)
        plt.close(figure)
        return path


profile = Profile


def main(script, args, roofline=None):
    """Run SCRIPT.py as __main__ under a profile, then print the table and the advisor's report."""
    if not os.path.exists(script):
        print(f"python -m jiasu profile: no such file: {script}", file=sys.stderr)
        return 2
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    status = 0
    with Profile() as p:
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    print(f"\n== jiasu profile of {script}: {len(p.records)} launches ==")
    print(p)
    if p.records:
        print(p.report())
    if roofline:
        print(f"roofline: {p.roofline(roofline)}")
    return status
