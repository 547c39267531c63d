/* launch_env.c: the variables a site launcher is not told to hand on by name (the caller's
 * session, and launchers' own), shared by gasnetrun's planner and its compiled front. */
#include <string.h>

#include "launch_env.h"

/* Of the caller's own session or shell: meaningless on the nodes, or set there anew. */
static const char *const session_names[] = {
    "SSH_AUTH_SOCK", "SSH_AGENT_PID", "SSH_CLIENT", "SSH_CONNECTION", "SSH_TTY", "DISPLAY",
    "XAUTHORITY", "WAYLAND_DISPLAY", "HOSTNAME", "HOST", "PWD", "OLDPWD", "SHLVL", "_",
    "XDG_RUNTIME_DIR", "XDG_SESSION_ID", "DBUS_SESSION_BUS_ADDRESS", "TMUX", "TMUX_PANE", "STY",
    "WINDOWID", "TERM_SESSION_ID", "KRB5CCNAME", "MAIL", "LOGNAME", "USER", "HOME", "SHELL",
    "PS1", "PROMPT_COMMAND"};

/* Of a launcher (the one that started gasnetrun, or ours): it sets them for each rank. */
static const char *const launcher_prefixes[] = {"OMPI_", "PMIX_", "PMI_", "PRTE_", "HYDRA_",
                                                "MPIR_", "SLURM_", "SRUN_", "GASNETRUN_"};

int gasneti_launch_handed_on(const char *name) {
  for (size_t i = 0; i < sizeof session_names / sizeof session_names[0]; i++)
    if (strcmp(name, session_names[i]) == 0) return 0;
  for (size_t i = 0; i < sizeof launcher_prefixes / sizeof launcher_prefixes[0]; i++)
    if (strncmp(name, launcher_prefixes[i], strlen(launcher_prefixes[i])) == 0) return 0;
  return 1;
}
