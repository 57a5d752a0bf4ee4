"""The accelerator engine: instruction set (:mod:`.isa`), task manager and the units around the cores."""
