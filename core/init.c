/* init.c - placeholder, being written */
