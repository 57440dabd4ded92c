/* device.c - placeholder, being written */
