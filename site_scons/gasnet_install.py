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
    for hybrid clients), after the common ones.

    Besides the documented aliases (GASNET_CC/CPPFLAGS/CFLAGS/LD/LDFLAGS/LIBS and the C++
    ones), the parts they are made of carry GASNet-1's names, as clients' Makefiles and GASNet's
    own test rules use them (GASNET_MISC_CFLAGS without the optimisation, GASNET_DEFINES, ...),
    and the MANUAL_* variables a user sets on make's command line go where GASNet-1 puts them."""
    define, lib_mode = CLIENT_MODES[mode]
    extra = " ".join(f"-l{lib}" for lib in libs)
    own = "".join(f"{name} = {value}\n" for name, value in (variables or {}).items())
    return (f"# {conduit}-{mode}.mak: include in a Makefile to build a GASNet client\n"
            f"GASNET_PREFIX = {prefix}\n"
            f"GASNET_DEFINES = {CLIENT_DEFINES} -D{define} $(MANUAL_DEFINES)\n"
            f"GASNET_INCLUDES = -I$(GASNET_PREFIX)/include "
            f"-I$(GASNET_PREFIX)/include/{conduit}-conduit\n"
            f"GASNET_LIBDIRS = -L$(GASNET_PREFIX)/lib\n"
            f"GASNET_CC = {cc}\n"
            f"GASNET_OPT_CFLAGS = {' '.join(opt[:1])}\n"
            f"GASNET_MISC_CFLAGS = -pthread\n"
            f"GASNET_MISC_CPPFLAGS =\n"
            f"GASNET_CPPFLAGS = $(GASNET_MISC_CPPFLAGS) $(GASNET_DEFINES) $(GASNET_INCLUDES)\n"
            f"GASNET_CFLAGS = $(GASNET_OPT_CFLAGS) $(GASNET_MISC_CFLAGS) $(MANUAL_CFLAGS)\n"
            # C++ clients (GASNet's fragments name these too): same defines, the C++ compiler.
            f"GASNET_CXX = {cxx_for(cc)}\n"
            f"GASNET_OPT_CXXFLAGS = {' '.join(opt[:1])}\n"
            f"GASNET_MISC_CXXFLAGS = -pthread\n"
            f"GASNET_MISC_CXXCPPFLAGS =\n"
            f"GASNET_CXXCPPFLAGS = $(GASNET_MISC_CXXCPPFLAGS) $(GASNET_DEFINES) "
            f"$(GASNET_INCLUDES)\n"
            f"GASNET_CXXFLAGS = $(GASNET_OPT_CXXFLAGS) $(GASNET_MISC_CXXFLAGS) "
            f"$(MANUAL_CXXFLAGS)\n"
            # The library is C through and through: a C client links with the C compiler.
            f"GASNET_LD = {cc}\n"
            f"GASNET_LD_REQUIRES_CXX =\n"
            f"GASNET_LDFLAGS = -pthread {' '.join(link_opt)} $(MANUAL_LDFLAGS)\n"
            f"GASNET_LIBS = $(GASNET_LIBDIRS) -lgasnet-{conduit}-{lib_mode} {extra} -lrt -lm "
            f"$(MANUAL_LIBS)\n"
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
    """The fragment of a program that uses the tools library alone (no conduit), with
    GASNet-1's names for the parts (GASNet's own testtools and testtoolscxx rules link with
    GASNETTOOLS_LD and GASNETTOOLS_CXX, and build the library GASNETTOOLS_TOOLLIB_NAME names)."""
    thread = f"-D{define}" + (" -D_REENTRANT" if define == "GASNETT_THREAD_SAFE" else "")
    return (f"# gasnet_tools-{mode}.mak: include in a Makefile to use libgasnet_tools-{mode}\n"
            f"GASNETTOOLS_PREFIX = {prefix}\n"
            f"GASNETTOOLS_INCLUDES = -I$(GASNETTOOLS_PREFIX)/include\n"
            f"GASNETTOOLS_LIBDIR = $(GASNETTOOLS_PREFIX)/lib\n"
            f"GASNETTOOLS_DEBUGFLAGS =\n"
            f"GASNETTOOLS_THREADFLAGS = {thread}\n"
            f"GASNETTOOLS_THREADLIBS = -pthread\n"
            f"GASNETTOOLS_TOOLLIB_NAME = gasnet_tools-{mode}\n"
            f"GASNETTOOLS_CC = {cc}\n"
            f"GASNETTOOLS_CPPFLAGS = -D_GNU_SOURCE=1 $(GASNETTOOLS_THREADFLAGS) "
            f"$(GASNETTOOLS_DEBUGFLAGS) "
            f"$(GASNETTOOLS_INCLUDES) $(MANUAL_CPPFLAGS)\n"
            f"GASNETTOOLS_CFLAGS = {' '.join(opt[:1])} -pthread $(MANUAL_CFLAGS)\n"
            f"GASNETTOOLS_LD = {cc}\n"
            f"GASNETTOOLS_LDFLAGS = -pthread {' '.join(link_opt)} -L$(GASNETTOOLS_LIBDIR) "
            f"$(MANUAL_LDFLAGS)\n"
            f"GASNETTOOLS_LIBS = -l$(GASNETTOOLS_TOOLLIB_NAME) $(GASNETTOOLS_THREADLIBS) -lrt -lm "
            f"$(MANUAL_LIBS)\n"
            f"GASNETTOOLS_CXX = {cxx_for(cc)}\n"
            f"GASNETTOOLS_CXXFLAGS = {' '.join(opt[:1])} -pthread $(MANUAL_CXXFLAGS)\n")
