// agboss console: the one script, embedded in the binary. It follows a running run's page live:
// the server sends each journaled step as HTML it escaped itself, then the run's status.
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  const live = document.getElementById("live");
  if (!live || !window.EventSource) return;
  const steps = document.getElementById("steps");
  const source = new EventSource(live.dataset.events);
  source.addEventListener("step", (event) => {
    steps.insertAdjacentHTML("beforeend", event.data);
  });
  source.addEventListener("end", (event) => {
    source.close();
    live.textContent = "The run ended: " + event.data + ".";
    // The finished run's page shows its answer.
    window.location.reload();
  });
});
