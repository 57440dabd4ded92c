/* object.c - placeholder, being written */
