// Imported first by the entry points (main.ts, cli/admin.ts), before anything
// else loads: on Node ≥ 22.1, V8's compiled code of every module loaded after
// this is kept on disk (os.tmpdir()/node-compile-cache, checked against each
// file's content) and reused by the next start, which otherwise spends about a
// fifth of its CPU compiling the same JavaScript again. Node 20 has no such
// cache: nothing happens there. Where the folder cannot be written, Node goes
// on without it; NODE_DISABLE_COMPILE_CACHE=1 turns it off, NODE_COMPILE_CACHE
// names another folder.
import nodeModule from 'node:module';

(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();
