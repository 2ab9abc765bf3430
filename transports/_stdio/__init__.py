"""stdio: `server` (`serve_stdio`, this process's stdin and stdout) and `client`."""
