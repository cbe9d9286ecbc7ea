; `# xeforge: ignore` and `# xeforge: ignore[XF101, XF2]` comments.
((comment) @suppression
  (#match? @suppression "xeforge\\s*:\\s*ignore"))
