/* hostapi.c - placeholder, being written */
