"""Signal names for messages, including the real-time signals Python's enum does not name."""
import signal


def signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        if signal.SIGRTMIN <= sig <= signal.SIGRTMAX:
            return f"SIGRTMIN+{sig - signal.SIGRTMIN}"
        return f"signal {sig}"
