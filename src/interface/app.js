document.getElementById("app").textContent = "Mailroom";
