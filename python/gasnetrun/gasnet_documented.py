"""GASNET_* variables that GASNet-1's own documentation describes and this implementation does
not read (debugging mallocs, freeze and backtrace, spawner internals,
VIS and collectives tuning). A job that sets one runs, with a one-line warning that it has no
effect here: scripts written for GASNet often carry them."""

NOT_IMPLEMENTED = frozenset({
    "GASNET_BACKTRACE_TYPE", "GASNET_BACKTRACE_NODES", "GASNET_BACKTRACE_MT",
    "GASNET_MALLOCFILE", "GASNET_MALLOC_INIT", "GASNET_MALLOC_CLOBBER", "GASNET_MALLOC_LEAKALL",
    "GASNET_MALLOC_SCANFREED", "GASNET_MALLOC_EXTRACHECK", "GASNET_TEST_POLITE_SYNC",
    "GASNET_DISABLE_ENVDECODE", "GASNET_DISABLE_ARGDECODE", "GASNET_QUIET",
    "GASNET_NODEMAP_EXACT", "GASNET_CSPAWN_CMD", "GASNET_ENVCMD",
    "GASNET_SSH_KEEPDIR", "GASNET_MASTERIP", "GASNET_WORKERIP",
    "GASNET_PSHM_NETWORK_DEPTH", "GASNET_HOST_DETECT", "GASNET_COLL_ENABLE_SEARCH",
    "GASNET_VIS_AMPIPE", "GASNET_VIS_REMOTECONTIG",
    # GASNet 1.x names clients still set before gasnet_init (Legion/Realm 17.02 sets the first
    # three): the physical-memory probe's off switch, ibv's spawner choice before 1.26 named it
    # GASNET_SPAWNER, and ibv's AMs over RDMA, its queue pairs and its XRC.
    "GASNET_PHYSMEM_NOPROBE", "GASNET_IB_SPAWNER", "GASNET_AMRDMA_MAX_PEERS",
    "GASNET_NUM_QPS", "GASNET_USE_XRC",
})
