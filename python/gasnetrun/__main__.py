"""The Python gasnetrun: gasnetrun_entry.py (which the compiled bin/gasnetrun hands every job
it does not run itself), the `gasnetrun` console script and `python -m gasnetrun` all run
main(). `--agent` first is the per-host agent that gasnetrun itself starts on other hosts
(instructions on stdin); anything else is the launcher."""
import sys


def main() -> int:
    from .closedpipe import quiet_on_closed_pipe
    return quiet_on_closed_pipe(dispatch)


def dispatch() -> int:
    if sys.argv[1:2] == ["--agent"]:
        from .agent.main import main as agent_main
        return agent_main()
    if sys.argv[1:2] == ["--probe-host"]:  # what gasnetrun --probe runs on other hosts
        import json
        from .probe import probe_host
        try:
            probe = probe_host(sys.argv[2] if len(sys.argv) > 2 else None)
        except (OSError, ValueError) as err:
            print(f"gasnetrun --probe-host: {err}", file=sys.stderr)
            return 1
        print(json.dumps(probe.to_json()))
        return 0
    from .cli import main as cli_main
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
