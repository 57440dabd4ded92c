/* threadpool.c - placeholder, being written */
