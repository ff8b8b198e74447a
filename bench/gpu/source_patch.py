"""What the experiment patchers (patch_*.py) share: they rewrite the
emitted sm_90 sources of an ab_tree.sh tree's `layer` in place."""
import glob

# The barrier the emitter ends a task with where no publish does.
REUSE_SYNC = '    mono_block_sync();  // shared memory is reused by the next task'


def add_helper(text, helper):
    """`helper` (device code) just before the first stage function, or the
    kernel where there are none, so that both can call it."""
    at = text.index('MONO_STAGE void') if 'MONO_STAGE void' in text else text.index('MONO_KERNEL void')
    at = text.rfind('\n', 0, at) + 1
    return text[:at] + helper + text[at:]


def options(argv):
    """KEY=VALUE arguments as a dict."""
    return dict(a.split('=') for a in argv)


def patch_layer(tree, pattern, helper, patch, unit='stages'):
    """Each source of the tree's layer that `pattern` names, rewritten by
    patch(path, text) -> (text, count of `unit` patched); a source with
    something patched gets `helper` too."""
    for path in sorted(glob.glob(tree + '/bench/gpu/emitted/layer/' + pattern)):
        text = open(path).read()
        new, count = patch(path, text)
        if count:
            open(path, 'w').write(add_helper(new, helper))
        print(path.split('/')[-1], 'patched %d %s' % (count, unit))


def rewrite_task_loops(text, rewrite):
    """Each stage's task loop of the source (its `  for (mono_i64 task` line
    to its closing `  }`, as a list of lines) rewritten by rewrite(loop) ->
    the lines in its place, or None to keep it; -> (text, count rewritten)."""
    lines = text.split('\n')
    out, i, count = [], 0, 0
    while i < len(lines):
        if not lines[i].startswith('  for (mono_i64 task'):
            out.append(lines[i])
            i += 1
            continue
        end = i + 1
        while lines[end] != '  }':
            end += 1
        loop = lines[i:end + 1]
        new = rewrite(loop)
        out.extend(loop if new is None else new)
        count += new is not None
        i = end + 1
    return '\n'.join(out), count
