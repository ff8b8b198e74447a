"""monodc from Python: the runtime library's C ABI (monodc/runtime/monodc.h)
through ctypes, with torch tensors bound to a launch's regions.

    import monodc
    session = monodc.Session("/var/cache/monodc")           # runtime-only
    kernel = session.kernel("model=dsv41 launch=k1 arch=gfx950 tp=2 rows=8")
    launcher = monodc.Launcher(kernel, device=0)
    launcher.bind("x", x)                                   # a torch tensor
    launcher.launch()                                       # torch's current stream

The library is libmonodc_runtime.so, found through $MONODC_LIBRARY, else the
loader's path. Every failure raises monodc.Error with the library's one-line
reason, or the binding's own (a tensor of the wrong dtype, size, device or
layout names the region and what it wants). docs/runtime.md, "Python".
"""

import ctypes
import os

__all__ = ["Error", "Session", "Kernel", "Argument", "Launcher", "LayerStep", "PeerGroup",
           "Deployment", "StepFacts",
           "Eligibility", "check_deployment", "eligibility", "step_width", "library"]


class Error(RuntimeError):
    """A monodc call failed; the message says what and why."""


class _KernelArgument(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_char_p), ("offset", ctypes.c_int64),
                ("size", ctypes.c_int64), ("bytes", ctypes.c_int64),
                ("launcher_owned", ctypes.c_int), ("format", ctypes.c_char_p),
                ("handed_from_kernel", ctypes.c_char_p), ("handed_from_region", ctypes.c_char_p),
                ("step_result", ctypes.c_int), ("rows_at_launch", ctypes.c_int),
                ("row_bytes", ctypes.c_int64), ("cols_at_launch", ctypes.c_int)]


class _Deployment(ctypes.Structure):
    _fields_ = [("model", ctypes.c_char_p), ("arch", ctypes.c_char_p),
                ("built_archs", ctypes.c_char_p), ("tp", ctypes.c_int64),
                ("expert_parallel", ctypes.c_int64), ("data_parallel", ctypes.c_int64),
                ("routed_weights", ctypes.c_char_p), ("compute_units", ctypes.c_int64),
                ("grid", ctypes.c_int64), ("kv_cache_pages", ctypes.c_int64),
                ("max_positions", ctypes.c_int64)]


class _StepFacts(ctypes.Structure):
    _fields_ = [("rows", ctypes.c_int64), ("uniform_decode", ctypes.c_int),
                ("piecewise_capture", ctypes.c_int), ("causal", ctypes.c_int),
                ("metadata", ctypes.c_int), ("max_position", ctypes.c_int64)]


class _EligibilityResult(ctypes.Structure):
    _fields_ = [("runs", ctypes.c_int), ("launches", ctypes.c_char_p), ("ratio", ctypes.c_int64),
                ("width", ctypes.c_int64), ("reason", ctypes.c_char * 256)]


_lib = None
_P = ctypes.c_void_p


def library():
    """The loaded runtime library (loaded on first use)."""
    global _lib
    if _lib is not None:
        return _lib
    path = os.environ.get("MONODC_LIBRARY") or "libmonodc_runtime.so"
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise Error(f"cannot load the monodc runtime library {path}: {e} (set MONODC_LIBRARY "
                    "to libmonodc_runtime.so)") from None
    signatures = {
        "monodc_error_message": ([_P], ctypes.c_char_p),
        "monodc_error_free": ([_P], None),
        "monodc_session_open": ([ctypes.c_char_p, ctypes.POINTER(_P)], _P),
        "monodc_session_close": ([_P], None),
        "monodc_session_kernel": ([_P, ctypes.c_char_p, ctypes.POINTER(_P)], _P),
        "monodc_step_width": ([ctypes.c_int64], ctypes.c_int64),
        "monodc_kernel_key": ([_P], ctypes.c_char_p),
        "monodc_kernel_symbol": ([_P], ctypes.c_char_p),
        "monodc_kernel_grid": ([_P], ctypes.c_int64),
        "monodc_kernel_block": ([_P], ctypes.c_int64),
        "monodc_kernel_ranks": ([_P], ctypes.c_int64),
        "monodc_kernel_peer_buffer_bytes": ([_P], ctypes.c_int64),
        "monodc_kernel_argument_count": ([_P], ctypes.c_size_t),
        "monodc_kernel_argument_get": ([_P, ctypes.c_size_t, ctypes.POINTER(_KernelArgument)], _P),
        "monodc_launcher_create_shared": ([_P, ctypes.c_int, ctypes.c_int, ctypes.POINTER(_P)], _P),
        "monodc_launcher_bind": ([_P, ctypes.c_char_p, _P], _P),
        "monodc_launcher_bind_buffer": ([_P, ctypes.c_char_p, _P, ctypes.c_int64], _P),
        "monodc_launcher_bind_rank": ([_P, ctypes.c_int], _P),
        "monodc_launcher_set_rows": ([_P, ctypes.c_char_p, ctypes.c_int64], _P),
        "monodc_launcher_set_cols": ([_P, ctypes.c_char_p, ctypes.c_int64], _P),
        "monodc_launcher_launch": ([_P, _P], _P),
        "monodc_launcher_set_wait_budget": ([_P, ctypes.c_uint32], _P),
        "monodc_launcher_check_waits": ([_P, _P], _P),
        "monodc_launcher_reset_scratch": ([_P], _P),
        "monodc_launcher_destroy": ([_P], None),
        "monodc_peer_group_create": ([_P, ctypes.c_int, ctypes.c_int, ctypes.POINTER(_P)], _P),
        "monodc_peer_group_handle": ([_P, ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8))],
                                     ctypes.c_size_t),
        "monodc_peer_group_connect": ([_P, ctypes.POINTER(ctypes.POINTER(ctypes.c_uint8)),
                                       ctypes.POINTER(ctypes.c_size_t), ctypes.c_int], _P),
        "monodc_peer_group_exchange": ([_P, ctypes.c_char_p, ctypes.c_int], _P),
        "monodc_peer_group_table": ([_P], _P),
        "monodc_peer_groups_create_local": ([_P, ctypes.POINTER(ctypes.c_int), ctypes.c_int,
                                             ctypes.POINTER(_P)], _P),
        "monodc_peer_group_destroy": ([_P], None),
        "monodc_layer_step_create": ([ctypes.POINTER(_P), ctypes.POINTER(ctypes.c_size_t),
                                      ctypes.c_size_t, ctypes.c_int, ctypes.c_int, _P,
                                      ctypes.POINTER(_P)], _P),
        "monodc_layer_step_bind": ([_P, ctypes.c_char_p, _P], _P),
        "monodc_layer_step_bind_buffer": ([_P, ctypes.c_char_p, _P, ctypes.c_int64], _P),
        "monodc_layer_step_bind_rank": ([_P, ctypes.c_int], _P),
        "monodc_layer_step_set_rows": ([_P, ctypes.c_char_p, ctypes.c_int64], _P),
        "monodc_layer_step_set_cols": ([_P, ctypes.c_char_p, ctypes.c_int64], _P),
        "monodc_layer_step_run": ([_P, ctypes.c_int64, _P], _P),
        "monodc_layer_step_set_wait_budget": ([_P, ctypes.c_uint32], _P),
        "monodc_layer_step_check_waits": ([_P, _P], _P),
        "monodc_layer_step_reset": ([_P], _P),
        "monodc_layer_step_destroy": ([_P], None),
        "monodc_deployment_check": ([ctypes.POINTER(_Deployment)], _P),
        "monodc_eligibility": ([ctypes.POINTER(_Deployment), ctypes.c_int64,
                                ctypes.POINTER(_StepFacts), ctypes.POINTER(_EligibilityResult)], _P),
    }
    for name, (arguments, result) in signatures.items():
        function = getattr(lib, name)
        function.argtypes = arguments
        function.restype = result
    _lib = lib
    return lib


def _check(error):
    """Raises the library's error (and frees it); nothing on success."""
    if error:
        lib = library()
        message = lib.monodc_error_message(error).decode()
        lib.monodc_error_free(error)
        raise Error(message)


def step_width(rows):
    """The step width a step of `rows` rows runs on (its other rows pad rows,
    slot_mapping -1); None outside 1..48."""
    width = library().monodc_step_width(int(rows))
    return width or None


class Argument:
    """One kernel argument: a region the caller binds, or the launch's own."""

    def __init__(self, raw):
        self.name = raw.name.decode()
        self.kind = raw.kind.decode()
        self.bytes = raw.bytes
        self.launcher_owned = bool(raw.launcher_owned)
        self.format = (raw.format or b"").decode()
        # In a layer step: (kernel, output) an earlier launch wrote this input
        # into, or None; whether this output is read by the step's caller.
        kernel = (raw.handed_from_kernel or b"").decode()
        self.handed_from = (kernel, raw.handed_from_region.decode()) if kernel else None
        self.step_result = bool(raw.step_result)
        # A region sized at launch (a KV cache): any whole number of rows of
        # row_bytes; binding a tensor gives the kernel its rows.
        self.rows_at_launch = bool(raw.rows_at_launch)
        self.row_bytes = raw.row_bytes
        # A region whose columns are given at launch (a block table, its
        # pages a row): binding a 2-D tensor gives the kernel its columns.
        self.cols_at_launch = bool(raw.cols_at_launch)

    @property
    def caller_binds_in_step(self):
        """Whether a LayerStep's caller binds it (inputs, weights, step
        results, the peers); the step binds hand-overs, outputs that live
        only inside the step, its scratch and the epoch buffer."""
        if self.launcher_owned or self.kind in ("epoch", "rank", "rows", "cols") or self.handed_from:
            return False
        return self.kind != "output" or self.step_result

    def __repr__(self):
        return f"Argument({self.name!r}, {self.kind}, {self.format or '-'}, {self.bytes} B)"


class Session:
    """Kernels from a cache directory (None: $MONODC_CACHE_DIR, else the user's
    cache); runtime-only, it never compiles."""

    def __init__(self, cache_dir=None):
        lib = library()
        handle = _P()
        _check(lib.monodc_session_open(cache_dir.encode() if cache_dir else None,
                                       ctypes.byref(handle)))
        self._handle = handle
        self._kernels = []

    def kernel(self, request):
        """A kernel by request text ("model=dsv41 launch=k1 ...") or a dict of
        the same fields."""
        if isinstance(request, dict):
            request = " ".join(f"{k}={v}" for k, v in request.items())
        handle = _P()
        _check(library().monodc_session_kernel(self._handle, request.encode(),
                                               ctypes.byref(handle)))
        kernel = Kernel(self, handle)
        self._kernels.append(kernel)
        return kernel

    def close(self):
        if self._handle:
            library().monodc_session_close(self._handle)
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Kernel:
    """A built kernel; it belongs to (and keeps alive) its session."""

    def __init__(self, session, handle):
        self._session = session
        self._handle = handle
        lib = library()
        self.key = lib.monodc_kernel_key(handle).decode()
        self.symbol = lib.monodc_kernel_symbol(handle).decode()
        self.grid = lib.monodc_kernel_grid(handle)
        self.block = lib.monodc_kernel_block(handle)
        self.ranks = lib.monodc_kernel_ranks(handle)
        self.peer_buffer_bytes = lib.monodc_kernel_peer_buffer_bytes(handle)
        self.arguments = []
        for i in range(lib.monodc_kernel_argument_count(handle)):
            raw = _KernelArgument()
            _check(lib.monodc_kernel_argument_get(handle, i, ctypes.byref(raw)))
            self.arguments.append(Argument(raw))

    def argument(self, name):
        for a in self.arguments:
            if a.name == name:
                return a
        raise Error(f"kernel {self.symbol} has no argument '{name}' (its arguments: "
                    + ", ".join(a.name for a in self.arguments) + ")")


# The torch dtypes a region of each format takes: the format itself, or its
# raw bytes (codes the caller packed).
_DTYPES = {
    "f32": {"torch.float32"},
    "bf16": {"torch.bfloat16"},
    "i32": {"torch.int32"},
    "i64": {"torch.int64"},
    "e4m3": {"torch.float8_e4m3fn", "torch.uint8", "torch.int8"},
    "e8m0": {"torch.float8_e8m0fnu", "torch.uint8"},
    "e2m1": {"torch.float4_e2m1fn_x2", "torch.uint8"},
    "byte": {"torch.uint8", "torch.int8"},
}


def _tensor_problem(argument, tensor):
    """Why `tensor` cannot be bound to `argument`, or None."""
    wanted = _DTYPES.get(argument.format)
    dtype = str(getattr(tensor, "dtype", type(tensor).__name__))
    if wanted is not None and dtype not in wanted:
        return (f"a {dtype} tensor for a {argument.format} region (it takes "
                + " or ".join(sorted(wanted)) + ")")
    device = getattr(tensor, "device", None)
    if getattr(device, "type", None) != "cuda":
        return f"a tensor on {device}, not on the GPU (torch's 'cuda' device, HIP's too)"
    if not tensor.is_contiguous():
        return "a tensor that is not contiguous (call .contiguous())"
    nbytes = tensor.numel() * tensor.element_size()
    if argument.rows_at_launch:
        if nbytes < argument.row_bytes or nbytes % argument.row_bytes:
            return (f"a tensor of {nbytes} bytes (shape {tuple(tensor.shape)}) for a region of "
                    f"rows of {argument.row_bytes} bytes (as many as the engine sizes)")
        return None
    if argument.cols_at_launch:
        if len(tensor.shape) != 2:
            return (f"a tensor of shape {tuple(tensor.shape)} for a region of rows whose columns "
                    f"are given at launch (it takes [rows, columns])")
        return None  # its size against the rows at those columns: checked in C++
    if nbytes != argument.bytes:
        return (f"a tensor of {nbytes} bytes (shape {tuple(tensor.shape)}) for a region of "
                f"{argument.bytes} bytes")
    return None


def _bind(bind, bind_buffer, handle, region, tensor, sized):
    """Binds through the C ABI: a tensor with its size (a region sized at
    launch then takes the rows it holds), the epoch buffer or peer table as
    a bare pointer."""
    pointer = ctypes.c_void_p(tensor.data_ptr())
    if sized:
        _check(bind_buffer(handle, region.encode(), pointer,
                           tensor.numel() * tensor.element_size()))
    else:
        _check(bind(handle, region.encode(), pointer))


def _stream_handle(stream):
    """A raw stream handle from a torch stream, a handle, or None (torch's
    current stream where torch is loaded, else the default stream)."""
    if stream is None:
        import sys
        torch = sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            stream = torch.cuda.current_stream()
    return ctypes.c_void_p(getattr(stream, "cuda_stream", stream) or 0)


class Launcher:
    """A kernel loaded on `device` (for `ranks_on_device` TP ranks sharing it),
    its scratch allocated; bind every region, then launch any number of times."""

    _handle = None  # until created: close() then has nothing to free

    def __init__(self, kernel, device=0, ranks_on_device=1):
        self._kernel = kernel
        handle = _P()
        _check(library().monodc_launcher_create_shared(kernel._handle, int(device),
                                                       int(ranks_on_device), ctypes.byref(handle)))
        self._handle = handle
        self._bound = {}

    def bind(self, region, tensor):
        """Binds a torch tensor (or, for the epoch buffer and peers, any object
        with data_ptr()) to `region`, after checking its dtype, device,
        layout and size against the kernel's argument."""
        argument = self._kernel.argument(region)
        if argument.launcher_owned:
            raise Error(f"bind '{region}': the launcher owns it")
        if argument.kind not in ("epoch", "peers"):
            problem = _tensor_problem(argument, tensor)
            if problem:
                raise Error(f"bind '{region}' of {self._kernel.symbol}: {problem}")
        if argument.cols_at_launch:
            self.set_cols(region, tensor.shape[1])
        _bind(library().monodc_launcher_bind, library().monodc_launcher_bind_buffer,
              self._handle, region, tensor, argument.kind not in ("epoch", "peers"))
        self._bound[region] = tensor  # keeps it alive while bound

    def set_rows(self, region, rows):
        """The rows of a region sized at launch (bind sets them from the
        tensor); every later launch takes them."""
        _check(library().monodc_launcher_set_rows(self._handle, region.encode(), int(rows)))

    def set_cols(self, region, cols):
        """The columns of a region whose columns are given at launch (bind
        sets them from a 2-D tensor's shape); every later launch takes them."""
        _check(library().monodc_launcher_set_cols(self._handle, region.encode(), int(cols)))

    def bind_rank(self, rank):
        _check(library().monodc_launcher_bind_rank(self._handle, int(rank)))

    def launch(self, stream=None):
        """Launches on `stream` (a torch stream, a raw handle, or None: torch's
        current stream where torch is loaded, else the default stream)."""
        _check(library().monodc_launcher_launch(self._handle, _stream_handle(stream)))

    def set_wait_budget(self, microseconds):
        """Every poll of the kernel gives up past this budget (0: the default,
        5 s); written into the bound epoch buffer while no launch runs."""
        _check(library().monodc_launcher_set_wait_budget(self._handle, int(microseconds)))

    def check_waits(self, stream=None):
        """Waits for `stream`; raises Error naming the wait (rank, CTA, stage,
        flags, tags) if a poll gave up. The outputs are then not valid: zero
        the epoch and peer buffers and call reset_scratch before the next step."""
        _check(library().monodc_launcher_check_waits(self._handle, _stream_handle(stream)))

    def reset_scratch(self):
        _check(library().monodc_launcher_reset_scratch(self._handle))

    def close(self):
        if self._handle:
            library().monodc_launcher_destroy(self._handle)
            self._handle = None

    def __del__(self):
        self.close()


class LayerStep:
    """One rank's decode layer run as steps (docs/runtime.md, "Layer steps").
    `widths`: for each step width, its kernels in step order ([k1, k2], or
    [ffn]). The step binds what its kernels' manifests give it (K1's
    hand-over to K2, the outputs that live only inside the step, the epoch
    buffer); the caller binds the rest once for every width: inputs sized
    for the widest step, weights, step results, "mono_peers". A rank's other
    layers pass its first LayerStep as `same_rank` (one epoch buffer a rank)."""

    _handle = None  # until created: close() then has nothing to free

    def __init__(self, widths, device=0, ranks_on_device=1, same_rank=None):
        widths = [list(width) for width in widths]
        kernels = [kernel for width in widths for kernel in width]
        if not widths or any(not width for width in widths):
            raise Error("a layer step needs at least one step width, each with its launches")
        array = (_P * len(kernels))(*[kernel._handle for kernel in kernels])
        counts = (ctypes.c_size_t * len(widths))(*[len(width) for width in widths])
        handle = _P()
        _check(library().monodc_layer_step_create(
            array, counts, len(widths), int(device), int(ranks_on_device),
            same_rank._handle if same_rank is not None else None, ctypes.byref(handle)))
        self._handle = handle
        self._kernels = kernels  # keeps their sessions alive
        self._bound = {}

    def bind(self, region, tensor):
        """Binds a torch tensor (for "mono_peers", a PeerGroup or any object
        with data_ptr()) to `region` of every launch and width that has it,
        after checking it against the widest step's argument."""
        arguments = [a for k in self._kernels for a in k.arguments if a.name == region]
        if arguments and region != "mono_peers":
            widest = max(arguments, key=lambda a: a.bytes)
            problem = _tensor_problem(widest, tensor)
            if problem:
                raise Error(f"bind '{region}' of a layer step: {problem}")
            if widest.cols_at_launch:
                self.set_cols(region, tensor.shape[1])
        _bind(library().monodc_layer_step_bind, library().monodc_layer_step_bind_buffer,
              self._handle, region, tensor, bool(arguments) and region != "mono_peers")
        self._bound[region] = tensor  # keeps it alive while bound

    def set_rows(self, region, rows):
        """The rows of a region sized at launch in every launch and width that
        has it or is handed it (bind sets them from the tensor)."""
        _check(library().monodc_layer_step_set_rows(self._handle, region.encode(), int(rows)))

    def set_cols(self, region, cols):
        """The columns of a region whose columns are given at launch in every
        launch and width that has it (bind sets them from a 2-D tensor's
        shape)."""
        _check(library().monodc_layer_step_set_cols(self._handle, region.encode(), int(cols)))

    def bind_rank(self, rank):
        _check(library().monodc_layer_step_bind_rank(self._handle, int(rank)))

    def run(self, rows, stream=None):
        """Launches the step of width `rows` on `stream` (as Launcher.launch)."""
        _check(library().monodc_layer_step_run(self._handle, int(rows), _stream_handle(stream)))

    def set_wait_budget(self, microseconds):
        _check(library().monodc_layer_step_set_wait_budget(self._handle, int(microseconds)))

    def check_waits(self, stream=None):
        """Raises Error naming the launch and wait if a poll of the last step
        gave up; then reset() every layer step of the rank and zero the peers."""
        _check(library().monodc_layer_step_check_waits(self._handle, _stream_handle(stream)))

    def reset(self):
        _check(library().monodc_layer_step_reset(self._handle))

    def close(self):
        if self._handle:
            library().monodc_layer_step_destroy(self._handle)
            self._handle = None

    def __del__(self):
        self.close()


class PeerGroup:
    """This rank's peer memory for a kernel with peer memory (TP across
    processes): `handle` is bytes for the other ranks; `connect` takes every
    rank's handle in rank order (its own included), or `exchange` moves them
    through a directory the ranks share. Bind it as "mono_peers"."""

    _handle = None  # until created: close() then has nothing to free

    def __init__(self, kernel, rank, device=0, _handle=None):
        if _handle is not None:  # made by local()
            self._handle = _handle
            return
        handle = _P()
        _check(library().monodc_peer_group_create(kernel._handle, int(device), int(rank),
                                                  ctypes.byref(handle)))
        self._handle = handle

    @classmethod
    def local(cls, kernel, devices):
        """One process driving several GPUs: every rank's group at once (rank
        r's buffer on devices[r]), peer access enabled, the tables built; no
        handles to exchange. Keep them all alive together."""
        devices = [int(d) for d in devices]
        handles = (_P * len(devices))()
        _check(library().monodc_peer_groups_create_local(
            kernel._handle, (ctypes.c_int * len(devices))(*devices), len(devices), handles))
        return [cls(kernel, rank, _handle=_P(h)) for rank, h in enumerate(handles)]

    @property
    def handle(self):
        data = ctypes.POINTER(ctypes.c_uint8)()
        size = library().monodc_peer_group_handle(self._handle, ctypes.byref(data))
        return bytes(data[:size])

    def connect(self, handles):
        buffers = [(ctypes.c_uint8 * len(h)).from_buffer_copy(h) for h in handles]
        pointers = (ctypes.POINTER(ctypes.c_uint8) * len(handles))(
            *[ctypes.cast(b, ctypes.POINTER(ctypes.c_uint8)) for b in buffers])
        sizes = (ctypes.c_size_t * len(handles))(*[len(h) for h in handles])
        _check(library().monodc_peer_group_connect(self._handle, pointers, sizes, len(handles)))

    def exchange(self, directory, timeout_ms=30000):
        _check(library().monodc_peer_group_exchange(self._handle, str(directory).encode(),
                                                    int(timeout_ms)))

    def data_ptr(self):
        """The peer table's device address (what Launcher.bind takes)."""
        return library().monodc_peer_group_table(self._handle) or 0

    def close(self):
        if self._handle:
            library().monodc_peer_group_destroy(self._handle)
            self._handle = None

    def __del__(self):
        self.close()


class Deployment:
    """What a deployment is (Eligibility.h): model, the device's arch, the
    arches it has kernels for, TP, parallelism, routed weights, compute units,
    the KV caches' pages, the positions served."""

    def __init__(self, arch, tp, compute_units, model="dsv41", built_archs=(),
                 expert_parallel=1, data_parallel=1, routed_weights="mxfp4_aiter", grid=0,
                 kv_cache_pages=0, max_positions=0):
        self.model, self.arch, self.tp = model, arch, tp
        self.built_archs = list(built_archs)
        self.expert_parallel, self.data_parallel = expert_parallel, data_parallel
        self.routed_weights, self.compute_units, self.grid = routed_weights, compute_units, grid
        self.kv_cache_pages = kv_cache_pages  # the engine's KV caches, 32 tokens a page
        self.max_positions = max_positions  # the engine's RoPE table rows (max_model_len)

    def _raw(self):
        return _Deployment(self.model.encode(), self.arch.encode(),
                           ",".join(self.built_archs).encode(), self.tp, self.expert_parallel,
                           self.data_parallel, self.routed_weights.encode(), self.compute_units,
                           self.grid, self.kv_cache_pages, self.max_positions)


class StepFacts:
    """What the engine knows of a step before it launches it."""

    def __init__(self, rows, uniform_decode=True, piecewise_capture=False, causal=True,
                 metadata=True, max_position=0):
        self.rows, self.uniform_decode, self.piecewise_capture = rows, uniform_decode, piecewise_capture
        self.causal, self.metadata = causal, metadata
        self.max_position = max_position  # the step's largest position (0: not checked)

    def _raw(self):
        return _StepFacts(self.rows, int(self.uniform_decode), int(self.piecewise_capture),
                          int(self.causal), int(self.metadata), self.max_position)


class Eligibility:
    def __init__(self, raw):
        self.runs = bool(raw.runs)
        self.launches = raw.launches.decode().split("+") if raw.runs else []
        self.ratio, self.width = raw.ratio, raw.width
        self.reason = raw.reason.decode()

    def __repr__(self):
        if self.runs:
            return f"Eligibility(runs {'+'.join(self.launches)}, ratio {self.ratio}, width {self.width})"
        return f"Eligibility(falls back: {self.reason})"


def check_deployment(deployment):
    """Raises Error naming what rules the fused path out for `deployment`."""
    raw = deployment._raw()
    _check(library().monodc_deployment_check(ctypes.byref(raw)))


def eligibility(deployment, layer, step):
    """Whether the fused path runs `layer` for `step`; Error where the
    deployment cannot run it at all or the layer is not the model's."""
    raw, facts, out = deployment._raw(), step._raw(), _EligibilityResult()
    _check(library().monodc_eligibility(ctypes.byref(raw), int(layer), ctypes.byref(facts),
                                        ctypes.byref(out)))
    return Eligibility(out)
