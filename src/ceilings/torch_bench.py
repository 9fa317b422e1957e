# efficiency-audit step 1: measured GPU ceilings with the runner's own torch.
# Prints one JSON object on stdout. Run by `efficiency-audit ceilings`; argv[1] = seconds budget.
import json
import sys
import time


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    budget = float(sys.argv[1]) if len(sys.argv) > 1 else 30.0
    deadline = time.monotonic() + budget
    try:
        import torch
    except Exception as exc:  # ImportError, or a broken install
        emit({"available": False, "reason": "python could not import torch: %s" % exc})
        return
    if not torch.cuda.is_available():
        emit({"available": False,
              "reason": "torch %s imported but torch.cuda.is_available() is False "
                        "(CPU-only torch build, or the driver is not visible)" % torch.__version__})
        return
    devices = []
    for index in range(torch.cuda.device_count()):
        devices.append(bench_device(torch, index, deadline))
    emit({"available": True, "torch": torch.__version__, "cuda": torch.version.cuda,
          "devices": devices})


def timed(torch, fn, deadline, target=0.05, samples=3):
    """Best seconds per call over `samples` samples of about `target` seconds each (CUDA events)."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    once = max(start.elapsed_time(end) / 1000.0, 1e-6)
    iters = max(1, min(200, int(target / once)))
    best = once
    for _ in range(samples):
        if time.monotonic() > deadline:
            break
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        best = min(best, start.elapsed_time(end) / 1000.0 / iters)
    return best


def bench_device(torch, index, deadline):
    dev = torch.device("cuda", index)
    torch.cuda.set_device(dev)
    props = torch.cuda.get_device_properties(dev)
    out = {"index": index, "name": props.name, "uuid": str(getattr(props, "uuid", "") or ""),
           "errors": {}}

    def attempt(key, fn):
        if time.monotonic() > deadline:
            out["errors"][key] = "time budget spent before this figure"
            return
        try:
            out[key] = fn()
        except Exception as exc:  # out of memory, unsupported dtype, MIG slice, ...
            out["errors"][key] = "%s: %s" % (type(exc).__name__, exc)
        finally:
            torch.cuda.empty_cache()

    def matmul(dtype, n, tf32):
        old = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = tf32
        try:
            a = torch.randn(n, n, device=dev, dtype=dtype)
            b = torch.randn(n, n, device=dev, dtype=dtype)
            c = torch.empty(n, n, device=dev, dtype=dtype)
            seconds = timed(torch, lambda: torch.matmul(a, b, out=c), deadline)
            return 2.0 * n ** 3 / seconds / 1e12
        finally:
            torch.backends.cuda.matmul.allow_tf32 = old

    free = torch.cuda.mem_get_info(dev)[0]
    attempt("fp32_tflops", lambda: matmul(torch.float32, 4096, False))
    attempt("tf32_tflops", lambda: matmul(torch.float32, 8192, True))
    attempt("bf16_tflops", lambda: matmul(torch.bfloat16, 8192, False))
    attempt("fp16_tflops", lambda: matmul(torch.float16, 8192, False))

    def d2d():
        nbytes = int(min(1 << 30, free // 8))
        src = torch.empty(nbytes, dtype=torch.uint8, device=dev)
        dst = torch.empty_like(src)
        seconds = timed(torch, lambda: dst.copy_(src), deadline)
        return 2.0 * nbytes / seconds / 1e9  # read + write, as bandwidthTest counts it

    def host(direction):
        nbytes = 256 << 20
        pinned = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
        device = torch.empty(nbytes, dtype=torch.uint8, device=dev)
        if direction == "h2d":
            fn = lambda: device.copy_(pinned, non_blocking=True)
        else:
            fn = lambda: pinned.copy_(device, non_blocking=True)
        seconds = timed(torch, fn, deadline)
        return nbytes / seconds / 1e9

    attempt("d2d_gbs", d2d)
    attempt("h2d_gbs", lambda: host("h2d"))
    attempt("d2h_gbs", lambda: host("d2h"))
    return out


if __name__ == "__main__":
    try:
        main()
    except Exception as exc:
        emit({"available": False, "reason": "benchmark failed: %s: %s" % (type(exc).__name__, exc)})
