"""gasnetrun: the launcher of GASNet jobs."""
