"""gasnet-trace: summaries, a Perfetto timeline and a rank x rank heatmap of the trace files of
a GASNet job (GASNET_TRACEFILE, docs/tracing.md)."""
