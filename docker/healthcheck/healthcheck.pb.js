// Adds `pocketbase healthcheck [url]` for the docker compose healthcheck: the
// image is FROM scratch (no shell, no curl) and PocketBase has no health
// command of its own, so the binary probes itself through this hook. The same
// file serves both hooks lines (checked on 0.22.21 and 0.23.12; it uses only
// $app.rootCmd, Command, $http.send and $os.exit, which both APIs have).
// Run with its own hooks dir and a throwaway data dir, e.g.
//   pocketbase healthcheck --hooksDir /pb/healthcheck --dir /tmp/pb_healthcheck
// Exit 0 when GET <url> answers 200, else 1.
$app.rootCmd.addCommand(
  new Command({
    use: "healthcheck [url]",
    short: "Exit 0 if GET url (default http://127.0.0.1:8090/api/health) answers 200",
    run: (cmd, args) => {
      const url = args.length > 0 ? args[0] : "http://127.0.0.1:8090/api/health";
      let status = 0;
      try {
        status = $http.send({ url: url, method: "GET", timeout: 5 }).statusCode;
      } catch (err) {
        console.error("healthcheck: " + url + ": " + err);
        $os.exit(1);
      }
      if (status !== 200) {
        console.error("healthcheck: " + url + " answered HTTP " + status);
        $os.exit(1);
      }
      console.log("healthcheck: " + url + " answered 200");
    },
  }),
);
