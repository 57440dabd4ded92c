/* attrs.c - placeholder, being written */
