/* status.c - placeholder, being written */
