{ Minimal Flit bot: answers every "M" line with the move "0 0 0 0". }
program hello;

var
  line: string;
begin
  WriteLn(StdErr, 'hello from pascal');
  Flush(StdErr);
  while not Eof(Input) do
  begin
    ReadLn(line); { ReadLn drops "\n" and "\r\n" }
    if line = 'M' then
    begin
      WriteLn('0 0 0 0');
      Flush(Output);
    end;
  end;
end.
