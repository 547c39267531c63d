/* tools_linkconfig.c: the symbol a client's gasnet_tools.h refers to for its threading model:
 * linking a SEQ client with the PAR library (or the reverse) fails naming the model. */
#include "tools_internal.h"

int GASNETT_LINKCONFIG_THREADMODEL = 1;
