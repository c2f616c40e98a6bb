# GPU timing shared by scripts/measure-gpu-kernels.py and scripts/measure-gpu-llm.py (imported
# from the scripts' own folder). Needs PyTorch with CUDA.
import subprocess
import torch


def smi():
    """The GPU's name, clocks, power and temperature as nvidia-smi reads them now."""
    return subprocess.run(["nvidia-smi", "--query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu",
                           "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()


def timeit(fn, min_ms=40.0):
    """Seconds per call of fn: 3 warm-up calls, then back-to-back calls for about min_ms
    (5 to 200 of them), timed with CUDA events."""
    for _ in range(3): fn()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); fn(); e.record(); torch.cuda.synchronize()
    one = max(s.elapsed_time(e), 1e-3)
    reps = max(5, min(200, int(min_ms / one)))
    s.record()
    for _ in range(reps): fn()
    e.record(); torch.cuda.synchronize()
    return s.elapsed_time(e) / reps / 1e3
