"""python3 -m nnprof: the nnprof command line from Python.

    python3 -m nnprof record [RECORD OPTIONS] script.py [ARGS]   # nnprof record -- python3 script.py ARGS
    python3 -m nnprof record [RECORD OPTIONS] -m module [ARGS]   # nnprof record -- python3 -m module ARGS
    python3 -m nnprof report run.nnprof [OPTIONS]                # and every other nnprof subcommand

`record` runs the script with this interpreter under `nnprof record` (CPU samples, PyTorch
operators, memory with --memory); the other subcommands go to the nnprof CLI as they are. The
CLI is found through NNPROF_CLI, else beside the library this package loaded (PREFIX/bin/nnprof
once installed, build/<preset>/bin/nnprof in the build tree), else on PATH.
"""
import os
import shutil
import sys

# nnprof record's options that take a value (the others are flags).
_RECORD_VALUE_OPTIONS = {"--sample-hz", "--unwind", "-o", "--out", "--stack-sample", "--interval"}

_USAGE = """usage: python3 -m nnprof record [nnprof record options] script.py [args ...]
       python3 -m nnprof record [nnprof record options] -m module [args ...]
       python3 -m nnprof SUBCOMMAND ...   (report, export, query, compare, ...: as the nnprof CLI)
"""


def find_cli():
    """The nnprof executable's path, or None."""
    given = os.environ.get("NNPROF_CLI")
    if given:
        return given
    try:
        from nnprof import _native
        library = _native.library_directory()
    except ImportError:
        library = ""
    if library:
        beside = os.path.join(os.path.dirname(library), "bin", "nnprof")
        if os.access(beside, os.X_OK):
            return beside
    return shutil.which("nnprof")


def record_command(cli, args):
    """The nnprof record command line for `python3 -m nnprof record ARGS`."""
    options = []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            i += 1
            break
        if a == "-m":
            break
        if not a.startswith("-"):
            break
        options.append(a)
        if a in _RECORD_VALUE_OPTIONS:
            if i + 1 >= len(args):
                raise SystemExit(f"python3 -m nnprof record: {a} needs a value")
            options.append(args[i + 1])
            i += 1
        i += 1
    program = args[i:]
    if not program or program == ["-m"]:
        raise SystemExit("python3 -m nnprof record: which script? " + _USAGE.splitlines()[0][7:])
    return [cli, "record", *options, "--", sys.executable, *program]


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        sys.stderr.write(_USAGE)
        return 2
    if args[0] in ("-h", "--help"):
        sys.stdout.write(_USAGE)
        return 0
    cli = find_cli()
    if cli is None:
        sys.stderr.write(
            "python3 -m nnprof: the nnprof command line was not found: set NNPROF_CLI to its path, put it on PATH, "
            "or install nnprof (cmake --install) so that PREFIX/bin/nnprof sits beside the package's library\n")
        return 127
    command = record_command(cli, args[1:]) if args[0] == "record" else [cli, *args]
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execv(cli, command)  # the CLI takes this process over: its output and exit status are the user's
    except OSError as e:
        sys.stderr.write(f"python3 -m nnprof: could not run {cli}: {e.strerror}\n")
        return 126


if __name__ == "__main__":
    sys.exit(main())
