"""Code that runs inside a candidate's child process (imports torch; may touch the device)."""
