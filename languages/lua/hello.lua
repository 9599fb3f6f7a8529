-- Minimal Flit bot: answers every "M" line with the move "0 0 0 0".
io.stderr:write("hello from lua\n")
for line in io.lines() do
  if line:gsub("\r$", "") == "M" then
    io.write("0 0 0 0\n")
    io.flush()
  end
end
