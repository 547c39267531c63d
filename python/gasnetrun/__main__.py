"""The gasnetrun command: python/bin/gasnetrun, the `gasnetrun` console script and
`python -m gasnetrun` all run main(). `gasnetrun --agent` is the per-host agent that gasnetrun
itself starts on other hosts (instructions on stdin); anything else is the launcher."""
import sys


def main() -> int:
    if sys.argv[1:2] == ["--agent"]:
        from .agent.main import main as agent_main
        return agent_main()
    from .cli import main as cli_main
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
