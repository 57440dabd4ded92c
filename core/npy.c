/* npy.c - placeholder, being written */
