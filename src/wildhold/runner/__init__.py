"""Many runs: sweeps over arms x protocols x seeds x repeats on a local process pool or a Ray cluster, and forks
of an archived match at any tick."""
