model C
  replaceable Real x = 1 constrainedby Real;
end C;
