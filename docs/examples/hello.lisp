(string-append "hi " (llm "name?"))
