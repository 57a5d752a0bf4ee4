"""Board targets: simulation, ECPIX-5 (ECP5), Arty A7 (Artix-7) (installed as ``hhe_gen.boards``)."""
