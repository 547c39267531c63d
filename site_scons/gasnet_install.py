"""What `scons install` writes for clients: the .mak fragments and pkg-config files that an
unchanged GASNet-1 client Makefile (or pkg-config) uses to compile and link."""

THREAD_DEFINES = {"seq": "GASNET_SEQ", "par": "GASNET_PAR"}
# What GASNet's own fragments put in front of every client's compile and clients rely on (e.g.
# pthread_yield and other GNU extensions declared by the system headers).
CLIENT_DEFINES = "-D_GNU_SOURCE=1 -D_REENTRANT"
# What a client may compile for: PARSYNC clients (one thread in GASNet at a time) link the PAR
# library, as GASNet's do.
CLIENT_MODES = {"seq": ("GASNET_SEQ", "seq"), "par": ("GASNET_PAR", "par"),
                "parsync": ("GASNET_PARSYNC", "par")}


def cxx_for(cc: str) -> str:
    """The C++ compiler of the same family as the C compiler the library was built with (C++
    clients link the C library, so the two must agree on the ABI)."""
    name = cc.rsplit("/", 1)[-1]
    for c, cxx in (("clang", "clang++"), ("gcc", "g++"), ("cc", "c++")):
        if name == c or name.startswith(c + "-"):
            return cc[:len(cc) - len(name)] + cxx + name[len(c):]
    return "c++"


def mak_text(prefix: str, cc: str, conduit: str, mode: str, opt: list[str], link_opt: list[str],
             libs: list[str], variables: dict[str, str] | None = None) -> str:
    """variables: a conduit's own (the mpi conduit's GASNET_MPI_CC and the flags of each MPI,
    for hybrid clients), after the common ones."""
    define, lib_mode = CLIENT_MODES[mode]
    extra = " ".join(f"-l{lib}" for lib in libs)
    cppflags = (f"{CLIENT_DEFINES} -D{define} -I$(GASNET_PREFIX)/include "
                f"-I$(GASNET_PREFIX)/include/{conduit}-conduit")
    own = "".join(f"{name} = {value}\n" for name, value in (variables or {}).items())
    return (f"# {conduit}-{mode}.mak: include in a Makefile to build a GASNet client\n"
            f"GASNET_PREFIX = {prefix}\n"
            f"GASNET_CC = {cc}\n"
            f"GASNET_CPPFLAGS = {cppflags}\n"
            f"GASNET_CFLAGS = {' '.join(opt[:1])} -pthread\n"
            # C++ clients (GASNet's fragments name these too): same defines, the C++ compiler.
            f"GASNET_CXX = {cxx_for(cc)}\n"
            f"GASNET_CXXCPPFLAGS = {cppflags}\n"
            f"GASNET_CXXFLAGS = {' '.join(opt[:1])} -pthread\n"
            f"GASNET_LD = {cc}\n"
            f"GASNET_LDFLAGS = -pthread {' '.join(link_opt)}\n"
            f"GASNET_LIBS = -L$(GASNET_PREFIX)/lib -lgasnet-{conduit}-{lib_mode} {extra} -lrt -lm\n"
            + own)


def pc_text(prefix: str, cc: str, conduit: str, mode: str, version: str, link_opt: list[str],
            libs: list[str], variables: dict[str, str] | None = None) -> str:
    """variables: a conduit's own, as pkg-config variables (GASNET_MPI_CC: mpi_cc)."""
    define, lib_mode = CLIENT_MODES[mode]
    extra = " ".join(f"-l{lib}" for lib in libs)
    own = "".join(f"{name.lower().removeprefix('gasnet_')}={value}\n"
                  for name, value in (variables or {}).items())
    cppflags = f"{CLIENT_DEFINES} -D{define} -I${{includedir}} -I${{includedir}}/{conduit}-conduit"
    return (f"prefix={prefix}\nincludedir=${{prefix}}/include\nlibdir=${{prefix}}/lib\n{own}"
            # What the .mak fragment says for C++ clients: pkg-config --variable=GASNET_CXX ...
            f"GASNET_CC={cc}\nGASNET_CXX={cxx_for(cc)}\nGASNET_CXXCPPFLAGS={cppflags}\n"
            f"GASNET_CXXFLAGS=-pthread\n\n"
            f"Name: gasnet-{conduit}-{mode}\n"
            f"Description: GASNet-1 runtime, {conduit} conduit, {mode.upper()} threading\n"
            f"Version: {version}\n"
            f"Cflags: {CLIENT_DEFINES} -D{define} -I${{includedir}} "
            f"-I${{includedir}}/{conduit}-conduit -pthread\n"
            # The library is static: everything it needs (libibverbs for ibv, libm for the knob
            # parsers) goes in Libs itself, or `pkg-config --libs` (without --static) would
            # leave the link short.
            f"Libs: -L${{libdir}} -lgasnet-{conduit}-{lib_mode} {extra} -pthread "
            f"{' '.join(link_opt)} -lrt -lm\n")


def tools_mak_text(prefix: str, cc: str, mode: str, define: str, opt: list[str],
                   link_opt: list[str]) -> str:
    """The fragment of a program that uses the tools library alone (no conduit)."""
    return (f"# gasnet_tools-{mode}.mak: include in a Makefile to use libgasnet_tools-{mode}\n"
            f"GASNETTOOLS_PREFIX = {prefix}\n"
            f"GASNETTOOLS_CC = {cc}\n"
            f"GASNETTOOLS_CPPFLAGS = -D_GNU_SOURCE=1 -D{define} -I$(GASNETTOOLS_PREFIX)/include\n"
            f"GASNETTOOLS_CFLAGS = {' '.join(opt[:1])} -pthread\n"
            f"GASNETTOOLS_LDFLAGS = -pthread {' '.join(link_opt)}\n"
            f"GASNETTOOLS_LIBS = -L$(GASNETTOOLS_PREFIX)/lib -lgasnet_tools-{mode} -lrt -lm\n")
