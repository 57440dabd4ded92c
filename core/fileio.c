/* fileio.c - placeholder, being written */
