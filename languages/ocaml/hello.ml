(* Minimal Flit bot: answers every "M" line with the move "0 0 0 0". *)
let () =
  prerr_endline "hello from ocaml";
  try
    while true do
      let line = input_line stdin in
      let line =
        if String.ends_with ~suffix:"\r" line
        then String.sub line 0 (String.length line - 1) else line in
      if line = "M" then print_endline "0 0 0 0" (* print_endline flushes *)
    done
  with End_of_file -> ()
