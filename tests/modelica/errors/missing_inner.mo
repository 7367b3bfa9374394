model World
  parameter Real g = 9.81;
end World;

model Ball
  outer World world;
  Real v;
equation
  der(v) = -world.g;
end Ball;

model Top
  Ball ball;
end Top;
