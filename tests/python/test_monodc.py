"""The Python package over the C ABI (runtime/python/monodc), without a GPU:
the runtime library through ctypes, a cache entry the C ABI test writes, the
launcher on the stand-in HIP library, and tensors as stand-ins with torch's
attributes (torch is not on the CI machine). Run by ctest (python_package)
with MONODC_LIBRARY, MONODC_HIP_LIBRARY and MONODC_TEST_CACHE set."""

import ctypes
import os
import subprocess
import sys
import unittest

import monodc


class FakeDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return "torch." + self.name


class FakeDevice:
    def __init__(self, kind):
        self.type = kind

    def __str__(self):
        return self.type


class FakeTensor:
    """What Launcher.bind reads of a torch tensor."""

    def __init__(self, dtype, shape, element_size, device="cuda", contiguous=True, address=4096):
        self.dtype, self.shape = FakeDtype(dtype), shape
        self.device = FakeDevice(device)
        self._element_size, self._contiguous, self._address = element_size, contiguous, address

    def numel(self):
        n = 1
        for extent in self.shape:
            n *= extent
        return n

    def element_size(self):
        return self._element_size

    def is_contiguous(self):
        return self._contiguous

    def data_ptr(self):
        return self._address


def sample_kernel():
    """The cache entry the C ABI test writes: attention_front's sample, with
    bf16 regions u, w, y of 64 bytes."""
    session = monodc.Session(os.environ["MONODC_TEST_CACHE"])
    return session, session.kernel("rows=6")


class KernelsAndLaunches(unittest.TestCase):
    def test_a_kernel_lists_its_arguments_with_their_formats(self):
        _, kernel = sample_kernel()
        self.assertEqual(kernel.symbol, "mono_attention_front")
        self.assertIn("launch=attention_front", kernel.key)
        u = kernel.argument("u")
        self.assertEqual((u.kind, u.format, u.bytes, u.launcher_owned), ("input", "bf16", 64, False))
        self.assertTrue(kernel.argument("mono_scratch").launcher_owned)
        with self.assertRaisesRegex(monodc.Error, "has no argument 'nope' \\(its arguments: u, w, y"):
            kernel.argument("nope")

    def test_a_missing_key_is_an_error_naming_it(self):
        session = monodc.Session(os.environ["MONODC_TEST_CACHE"])
        with self.assertRaisesRegex(monodc.Error, "no code object for model=dsv41 launch=attention_front tp=4 rows=47"):
            session.kernel({"tp": 4, "rows": 47})

    def test_bind_checks_dtype_device_layout_and_size(self):
        _, kernel = sample_kernel()
        launcher = monodc.Launcher(kernel, device=0)
        cases = [
            (FakeTensor("float32", (16,), 4), "a torch.float32 tensor for a bf16 region \\(it takes torch.bfloat16\\)"),
            (FakeTensor("bfloat16", (32,), 2, device="cpu"), "a tensor on cpu, not on the GPU"),
            (FakeTensor("bfloat16", (32,), 2, contiguous=False), "a tensor that is not contiguous"),
            (FakeTensor("bfloat16", (33,), 2), "a tensor of 66 bytes \\(shape \\(33,\\)\\) for a region of 64 bytes"),
        ]
        for tensor, message in cases:
            with self.assertRaisesRegex(monodc.Error, "bind 'u' of mono_attention_front: " + message):
                launcher.bind("u", tensor)
        with self.assertRaisesRegex(monodc.Error, "bind 'mono_scratch': the launcher owns it"):
            launcher.bind("mono_scratch", FakeTensor("uint8", (512,), 1))
        # Nothing was bound by the refusals: the library refuses the launch.
        with self.assertRaisesRegex(monodc.Error, "region 'u' \\(input, 64 bytes\\) is not bound"):
            launcher.launch(stream=0)
        for name in ("u", "w", "y"):
            launcher.bind(name, FakeTensor("bfloat16", (32,), 2))
        launcher.bind("mono_epoch", FakeTensor("int32", (10,), 4))
        launcher.launch(stream=0)
        launcher.close()

    def test_a_peer_group_needs_a_kernel_with_peer_memory(self):
        _, kernel = sample_kernel()
        with self.assertRaisesRegex(monodc.Error, "kernel mono_attention_front uses no peer memory"):
            monodc.PeerGroup(kernel, rank=0)
        with self.assertRaisesRegex(monodc.Error, "kernel mono_attention_front uses no peer memory"):
            monodc.PeerGroup.local(kernel, devices=[0, 1])

    def test_a_wait_that_gave_up_is_an_error_naming_it(self):
        # The stand-in's device memory is host memory: the test writes the
        # epoch buffer's wait-fault record as a kernel whose poll gave up would.
        _, kernel = sample_kernel()
        launcher = monodc.Launcher(kernel, device=0)
        record = 2 + kernel.grid + 256  # epoch, arrivals, marks, counters
        epoch = (ctypes.c_uint32 * (record + 8))()

        class Buffer:
            def data_ptr(self):
                return ctypes.addressof(epoch)

        launcher.bind("mono_epoch", Buffer())
        launcher.check_waits(stream=0)
        launcher.set_wait_budget(1000)
        self.assertEqual(epoch[record + 1], 1000)
        epoch[record:record + 8] = [1, 1000, 0, 2, 0, 5, 3, 1]
        with self.assertRaisesRegex(
                monodc.Error, "kernel mono_attention_front: rank 0 CTA 2 gave up waiting after its "
                "budget of 1 ms: stage 'only' \\(wait site 0\\) polled 'only.flags' flag 5 for "
                "the step's tag 3 and saw tag 1"):
            launcher.check_waits(stream=0)
        launcher.reset_scratch()
        launcher.close()

    def test_a_layer_step_takes_only_a_layers_launches(self):
        _, kernel = sample_kernel()
        u = kernel.argument("u")
        self.assertEqual((u.handed_from, u.step_result, u.caller_binds_in_step), (None, False, True))
        # The step binds its own: the scratch, the epoch buffer.
        self.assertFalse(kernel.argument("mono_scratch").caller_binds_in_step)
        self.assertFalse(kernel.argument("mono_epoch").caller_binds_in_step)
        with self.assertRaisesRegex(monodc.Error, "a layer step needs at least one step width"):
            monodc.LayerStep([])
        with self.assertRaisesRegex(
                monodc.Error, "kernel mono_attention_front declares no step result: it is not a "
                "launch of a layer step \(K1 then K2, or the FFN launch\)"):
            monodc.LayerStep([[kernel]])

    def test_a_layer_step_binds_once_for_every_width_and_runs(self):
        # The sample cache's K1 and K2 (widths 2 and 6): K2 takes q and the
        # cache from K1; x is read by both, y is the step's result.
        session = monodc.Session(os.environ["MONODC_TEST_CACHE"])
        widths = [[session.kernel(f"launch={launch} rows={rows} grid=4") for launch in ("k1", "k2")]
                  for rows in (2, 6)]
        q = widths[1][1].argument("q")
        self.assertEqual((q.handed_from, q.caller_binds_in_step), (("mono_k1", "q"), False))
        self.assertTrue(widths[1][1].argument("y").step_result)
        step = monodc.LayerStep(widths, device=0)
        # Sized for the widest step: 6 rows of 32 bf16.
        with self.assertRaisesRegex(monodc.Error, "bind 'x' of a layer step: a tensor of 128 bytes "
                                    "\\(shape \\(2, 32\\)\\) for a region of 384 bytes"):
            step.bind("x", FakeTensor("bfloat16", (2, 32), 2))
        with self.assertRaisesRegex(monodc.Error, "region 'q' belongs to the layer step"):
            step.bind("q", FakeTensor("bfloat16", (6, 32), 2))
        step.bind("x", FakeTensor("bfloat16", (6, 32), 2))
        step.bind("w1", FakeTensor("bfloat16", (32,), 2))
        step.bind("w2", FakeTensor("bfloat16", (32,), 2))
        # The cache's pages are the engine's: any whole number of 32-byte
        # rows, given to every launch by binding it.
        cache = widths[1][1].argument("cache")
        self.assertEqual((cache.rows_at_launch, cache.row_bytes), (True, 32))
        self.assertFalse(widths[1][1].argument("cache.rows").caller_binds_in_step)
        with self.assertRaisesRegex(monodc.Error, "bind 'cache' of a layer step: a tensor of 100 "
                                    "bytes \\(shape \\(100,\\)\\) for a region of rows of 32 bytes"):
            step.bind("cache", FakeTensor("uint8", (100,), 1))
        step.bind("cache", FakeTensor("uint8", (1000, 32), 1))
        with self.assertRaisesRegex(monodc.Error, "cannot have 0 rows"):
            step.set_rows("cache", 0)
        with self.assertRaisesRegex(monodc.Error, "kernel mono_k2 of the step of 6 rows has unbound "
                                    "arguments: y"):
            step.run(6, stream=0)
        step.bind("y", FakeTensor("bfloat16", (6, 32), 2))
        step.run(6, stream=0)
        step.run(2, stream=0)
        with self.assertRaisesRegex(monodc.Error, "no step width of 3 rows \\(its widths: 2, 6\\)"):
            step.run(3, stream=0)
        # The rank's second layer shares its memory.
        second = monodc.LayerStep(widths, device=0, same_rank=step)
        second.close()
        step.close()

    def test_step_widths(self):
        self.assertEqual([monodc.step_width(r) for r in (1, 6, 17, 48)], [1, 8, 24, 48])
        self.assertIsNone(monodc.step_width(49))
        self.assertIsNone(monodc.step_width(0))


class Eligibility(unittest.TestCase):
    def deployment(self, **changes):
        facts = dict(arch="gfx950", tp=2, compute_units=256, built_archs=["gfx950"])
        facts.update(changes)
        return monodc.Deployment(**facts)

    def test_layers_run_their_launches_and_ratio(self):
        e = monodc.eligibility(self.deployment(), 21, monodc.StepFacts(6))
        self.assertEqual((e.runs, e.launches, e.ratio, e.width, e.reason), (True, ["k1", "k2"], 1, 8, ""))
        e = monodc.eligibility(self.deployment(), 20, monodc.StepFacts(48))
        self.assertEqual((e.runs, e.launches, e.width), (True, ["ffn"], 48))

    def test_steps_it_does_not_serve_fall_back_with_the_reason(self):
        e = monodc.eligibility(self.deployment(), 3, monodc.StepFacts(6, piecewise_capture=True))
        self.assertFalse(e.runs)
        self.assertEqual(e.reason, "a piecewise graph capture, which may replay mixed batches")
        e = monodc.eligibility(self.deployment(), 3, monodc.StepFacts(49))
        self.assertEqual(e.reason, "49 rows (the kernels serve 1..48)")
        long_context = self.deployment(max_positions=131072)
        self.assertTrue(monodc.eligibility(long_context, 3, monodc.StepFacts(6, max_position=131071)).runs)
        e = monodc.eligibility(long_context, 3, monodc.StepFacts(6, max_position=131072))
        self.assertEqual(e.reason, "position 131072 is past the 131072 positions the deployment "
                                   "serves (the RoPE table and block tables it binds)")

    def test_a_deployment_that_cannot_run_is_an_error(self):
        for changes, message in [({"tp": 8}, "TP 8 is not served"),
                                 ({"compute_units": 64}, "the device offers 64 compute units"),
                                 ({"arch": "gfx942"}, "arch 'gfx942' has no kernels in this deployment"),
                                 ({"expert_parallel": 2}, "expert parallelism 2 is not served"),
                                 ({"kv_cache_pages": 1 << 20}, "KV caches of 1048576 pages are not served"),
                                 ({"max_positions": (1 << 24) + 1}, "16777217 positions are not served")]:
            with self.assertRaisesRegex(monodc.Error, message):
                monodc.check_deployment(self.deployment(**changes))
            with self.assertRaisesRegex(monodc.Error, message):
                monodc.eligibility(self.deployment(**changes), 3, monodc.StepFacts(6))
        with self.assertRaisesRegex(monodc.Error, "layer 40 is not a layer of dsv41"):
            monodc.eligibility(self.deployment(), 40, monodc.StepFacts(6))


class Loading(unittest.TestCase):
    def test_a_missing_library_is_a_clear_error(self):
        code = ("import monodc\n"
                "try:\n"
                "    monodc.step_width(6)\n"
                "except monodc.Error as e:\n"
                "    print(e)\n")
        env = dict(os.environ, MONODC_LIBRARY="/nonexistent/libmonodc_runtime.so")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertIn("cannot load the monodc runtime library /nonexistent/libmonodc_runtime.so", out.stdout)
        self.assertIn("set MONODC_LIBRARY", out.stdout)


if __name__ == "__main__":
    unittest.main()
