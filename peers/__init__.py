"""Independent A2A 1.0 peers the kit's own tests check their verdicts on."""
