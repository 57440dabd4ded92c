/* dispatch.c - placeholder, being written */
