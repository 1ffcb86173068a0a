"""knowprobe: measure what pre-trained language models know.

One module per workflow stage; each exposes pure functions that the Snakemake
rule wrappers in ``workflow/scripts`` call and that the tests call directly.
"""

__version__ = "0.1.0"


def _interrupted(signum, frame):
    # SystemExit, unlike KeyboardInterrupt, ends the job without a traceback: on Ctrl-C every
    # running job printed one from wherever it was (inside torch, mostly); Snakemake's display
    # says once which jobs were stopped (snakemake_logger_plugin_knowprobe)
    raise SystemExit(130)


def _quiet_on_ctrl_c() -> None:
    """In a rule's script (Snakemake defines ``snakemake`` in its ``__main__`` before the script's
    own imports), Ctrl-C ends the job quietly; elsewhere (tests, a user's session) nothing changes."""
    import signal
    import sys
    import threading

    main = sys.modules.get("__main__")
    if hasattr(main, "snakemake") and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _interrupted)


_quiet_on_ctrl_c()
