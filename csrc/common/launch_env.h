/* launch_env.h: which of the caller's variables a site launcher (srun, mpirun, mpiexec) is
 * told to hand on to every rank by name. One list for gasnetrun's Python planner (through the
 * CFFI binding) and its compiled front (gasnetrun.c), so both build the same command.
 * The region between CFFI-BEGIN and CFFI-END is also the binding's cdef. */
#ifndef GASNETI_LAUNCH_ENV_H
#define GASNETI_LAUNCH_ENV_H

/* CFFI-BEGIN */
/* 1 when the variable is handed on by name; 0 for the caller's own session (SSH_*, DISPLAY,
 * HOME...) and for launchers' own variables (OMPI_*, PMI_*, SLURM_*...), which the launcher
 * sets for each rank itself. */
int gasneti_launch_handed_on(const char *name);
/* CFFI-END */

#endif
