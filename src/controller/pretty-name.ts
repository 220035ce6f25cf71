/**
 * The prettyName given to an Instance that has none (docs/behaviour.md §7.2 step 5): two Title-Cased words
 * ("Gentle Falcon"). Upstream draws them at random; we derive them from the UID so the choice is
 * pure and a retried reconcile writes the same name.
 */
import { createHash } from 'node:crypto';

const ADJECTIVES = [
  'Able', 'Bold', 'Brave', 'Bright', 'Calm', 'Clever', 'Cool', 'Cosmic', 'Crisp', 'Daring', 'Eager', 'Fancy', 'Fast', 'Fine', 'Fluent', 'Gentle',
  'Glad', 'Golden', 'Grand', 'Happy', 'Honest', 'Humble', 'Jolly', 'Keen', 'Kind', 'Lively', 'Lucky', 'Merry', 'Mighty', 'Modest', 'Neat', 'Nimble',
  'Noble', 'Polite', 'Proud', 'Quick', 'Quiet', 'Rapid', 'Ready', 'Sharp', 'Shiny', 'Smart', 'Solid', 'Steady', 'Sunny', 'Swift', 'Tidy', 'Vivid',
];
const ANIMALS = [
  'Badger', 'Bear', 'Beaver', 'Bison', 'Cat', 'Cobra', 'Crane', 'Dolphin', 'Eagle', 'Falcon', 'Ferret', 'Finch', 'Fox', 'Gecko', 'Hawk', 'Heron',
  'Ibex', 'Koala', 'Lark', 'Lemur', 'Lion', 'Lynx', 'Marten', 'Mole', 'Moose', 'Otter', 'Owl', 'Panda', 'Parrot', 'Pony', 'Puffin', 'Quail',
  'Rabbit', 'Raven', 'Robin', 'Seal', 'Shark', 'Sloth', 'Sparrow', 'Swan', 'Tiger', 'Toucan', 'Turtle', 'Viper', 'Walrus', 'Whale', 'Wolf', 'Yak',
];

export function prettyNameFor(uid: string): string {
  const h = createHash('sha256').update(uid).digest();
  return `${ADJECTIVES[h[0] % ADJECTIVES.length]} ${ANIMALS[h[1] % ANIMALS.length]}`;
}
