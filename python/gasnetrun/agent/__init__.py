"""The per-host agent: the unit that owns one host's share of a job (its control hub, rank
processes, exit handling and clean-up), with an upstream that answers collectives (the root,
in gasnetrun) or forwards them to a parent agent over TCP."""
