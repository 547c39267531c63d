"""gasnet-tune: sweeps tunable GASNET_* knobs with the bundled benchmarks, run through
gasnetrun, and recommends an environment only where the gain clears the measurement noise.

The search space comes from the runtime's knob table (through gasnetrun's CFFI binding), the
measurements from the benchmarks' JSON records; nothing about a knob is declared here."""
